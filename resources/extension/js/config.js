// Constants shared by the worker and the panel. The protocol is docs/bridge-protocol.md (API 1.0).

export const API_VERSION = '1.0';
export const APP_ID = 'vodou-desktop';
export const DEFAULT_PORT = 47653; // the app's default; it falls back to the next four
export const PORT_FALLBACKS = 4;
export const PING_TIMEOUT_MS = 1500;
export const REQUEST_TIMEOUT_MS = 20000;
export const PROBE_TTL_MS = 30000; // one probe per page key per 30 s, like the app's own cache

// chrome.storage.local keys (the token never leaves the extension's own storage).
export const STORE = {
  token: 'vodouToken',
  port: 'vodouPort', // a port the person typed; empty = discover
};

// Which modes allow what (GOV-1). The app decides the mode; the extension only obeys it.
export const MAY_READ_PAGE = new Set(['suggest', 'collect']);
export const MAY_WRITE = new Set(['collect']);
