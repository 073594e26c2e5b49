// A helper module beside index.js: require('./format') resolves beside
// the script, so only a wrong working directory breaks index.js itself.
exports.stamp = (d) => d.toISOString().slice(11, 19) + " UTC";
