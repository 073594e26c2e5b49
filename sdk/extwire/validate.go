package extwire

// ProtocolVersion is the major version of the extension protocol, sent
// in hello_ack. Incompatible changes bump it; within a version frames and
// fields only grow.
const ProtocolVersion = 1

// ValidateExtensionFrame checks a line an extension wrote against the
// schema of the frame its `type` names.
func ValidateExtensionFrame(data []byte) error { return validateVariant("ExtensionFrame", data) }

// ValidateHostFrame checks a line zot wrote to an extension against the
// schema of the frame its `type` names.
func ValidateHostFrame(data []byte) error { return validateVariant("HostFrame", data) }

// ValidateManifest checks the bytes of an extension.json.
func ValidateManifest(data []byte) error { return ValidateDef("Manifest", data) }
