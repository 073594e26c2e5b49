// The ACP client's declarations (acp/index.js); the protocol's types are
// generated into acp/types.d.ts from schema/acp and schema/daemon.

import type { InitializeResponse, RequestPermissionRequest, SessionNotification, StopReason } from "./types.js";

export * from "./types.js";

/** The protocol version of schema/acp. */
export declare const PROTOCOL_VERSION: number;
/** The methods, by their wire names (generated). */
export declare const METHODS: Readonly<Record<string, string>>;

/** The agent's error answer. */
export declare class AcpError extends Error {
  constructor(code: number, message: string, data?: Record<string, unknown>);
  /** The JSON-RPC code. */
  code: number;
  /** data.kind: busy, unknown_session, connection_lost, refused, … */
  kind: string;
  data: Record<string, unknown>;
}

/** The daemon refused the connection: 401 (a missing or wrong token), 403, 429. */
export declare class RefusedError extends AcpError {
  constructor(url: string, status: number, why: string);
  status: number;
}

/** How a turn ended. */
export interface PromptResult {
  /** null when reconnected. */
  stopReason: StopReason | null;
  /** The connection dropped during the turn: the session was resumed, the turn has ended, its answer went to the lost connection. */
  reconnected: boolean;
  /** The answer's _meta (zot's record of the turn in meta.zot.result). */
  meta: Record<string, unknown>;
}

export interface ClientOptions {
  /** Every session/update, in order. */
  onUpdate?: (update: SessionNotification) => void;
  /** Answers a permission question with an option id (allow_once, reject_once, …), or null to cancel it. */
  onPermission?: (request: RequestPermissionRequest) => string | null | undefined | Promise<string | null | undefined>;
  /** The clientInfo name sent with initialize. */
  clientName?: string;
}

export interface ConnectOptions extends ClientOptions {
  /** The bearer token (default: $ZOT_TOKEN). */
  token?: string;
  /** Dial again after a drop and resume the sessions (default true). */
  reconnect?: boolean;
  /** Dials after a drop before giving up (default 10). */
  attempts?: number;
  /** The handshake's deadline (default 30000). */
  timeoutMs?: number;
}

export interface SpawnOptions extends ClientOptions {
  /** The zot binary (default: $ZOT_BIN, else zot on PATH). */
  bin?: string;
  /** Flags after `zot acp`. */
  args?: string[];
  env?: Record<string, string | undefined>;
  cwd?: string;
  stderr?: "inherit" | "ignore" | "pipe";
}

/** One connection to an ACP agent. */
export declare class AcpClient {
  /** The agent's answer to initialize. */
  info: InitializeResponse;
  call(method: string, params?: unknown): Promise<any>;
  newSession(cwd: string, mcpServers?: unknown[]): Promise<string>;
  loadSession(sessionId: string, cwd: string): Promise<void>;
  resumeSession(sessionId: string, cwd: string): Promise<void>;
  prompt(sessionId: string, text: string): Promise<PromptResult>;
  cancel(sessionId: string): Promise<void>;
  close(): Promise<void>;
}

/** Connects to a daemon's listener by URL. */
export declare function connect(url: string, options?: ConnectOptions): Promise<AcpClient>;
/** Starts zot acp and speaks ACP on its stdin and stdout. */
export declare function spawn(options?: SpawnOptions): Promise<AcpClient>;
