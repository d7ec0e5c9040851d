// The one HTTP client of the extension: finds the app, adds the headers the protocol requires,
// and turns every failure into a BridgeError whose `kind` the panel explains in plain words.

import {
  API_VERSION, APP_ID, DEFAULT_PORT, PING_TIMEOUT_MS, PORT_FALLBACKS, REQUEST_TIMEOUT_MS, STORE,
} from './config.js';

export class BridgeError extends Error {
  /** kind: not_running | not_paired | version | refused | expired | bad_request | not_found | failed */
  constructor(kind, message, status = 0, code = '') {
    super(message);
    this.kind = kind;
    this.status = status;
    this.code = code;
  }

  toJSON() {
    return { kind: this.kind, message: this.message, status: this.status, code: this.code };
  }
}

let foundPort = null; // remembered while the worker lives; found again after a failure

export async function readToken() {
  const stored = await chrome.storage.local.get(STORE.token);
  return stored[STORE.token] || '';
}

export async function saveToken(token) {
  await chrome.storage.local.set({ [STORE.token]: token });
}

export async function forgetToken() {
  await chrome.storage.local.remove(STORE.token);
}

export async function chosenPort() {
  const stored = await chrome.storage.local.get(STORE.port);
  const port = Number(stored[STORE.port]);
  return Number.isInteger(port) && port > 0 ? port : null;
}

export async function choosePort(port) {
  foundPort = null;
  if (port) await chrome.storage.local.set({ [STORE.port]: port });
  else await chrome.storage.local.remove(STORE.port);
}

function majorOf(version) {
  return String(version || '').split('.')[0];
}

async function fetchWithTimeout(url, init, timeoutMs) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    return await fetch(url, { ...init, signal: controller.signal, credentials: 'omit', cache: 'no-store' });
  } finally {
    clearTimeout(timer);
  }
}

/** GET /api/ping on one port: the app's identity, or null when nothing (or something else) answers. */
async function ping(port, token = '') {
  const headers = { 'X-Vodou-API': API_VERSION };
  if (token) headers.Authorization = `Bearer ${token}`; // only ever sent to the port already found
  try {
    const response = await fetchWithTimeout(`http://127.0.0.1:${port}/api/ping`, { headers }, PING_TIMEOUT_MS);
    if (response.status === 412) return { port, api: response.headers.get('X-Vodou-API') || 'another version' };
    if (!response.ok) return null;
    const body = await response.json();
    return body && body.app === APP_ID ? { port, api: body.api, paired: body.paired } : null;
  } catch {
    return null;
  }
}

async function candidatePorts() {
  const typed = await chosenPort();
  if (typed) return [typed];
  return Array.from({ length: PORT_FALLBACKS + 1 }, (_, i) => DEFAULT_PORT + i);
}

/** The port the app answers on; tries the typed port, or the default and the next four. */
export async function findApp() {
  if (foundPort) return foundPort;
  for (const port of await candidatePorts()) {
    const answer = await ping(port);
    if (!answer) continue;
    if (majorOf(answer.api) !== majorOf(API_VERSION)) {
      throw new BridgeError('version', `The Vodou app speaks API ${answer.api}; this extension needs ${API_VERSION}.`, 412);
    }
    foundPort = port;
    return port;
  }
  throw new BridgeError('not_running', 'The Vodou app is not running (nothing answered on this computer).');
}

/** Ping the found app with the token: {port, paired}. A token the app no longer knows is dropped. */
export async function appStatus() {
  const port = await findApp();
  const token = await readToken();
  const answer = await ping(port, token);
  if (!answer) {
    foundPort = null;
    throw new BridgeError('not_running', 'The Vodou app stopped answering.');
  }
  if (token && answer.paired !== true) await forgetToken();
  return { port, paired: Boolean(token) && answer.paired === true };
}

function requestHeaders(method, token, hasBody) {
  const headers = { 'X-Vodou-API': API_VERSION };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (method !== 'GET') headers['X-Vodou-Client'] = 'extension';
  if (hasBody) headers['Content-Type'] = 'application/json';
  return headers;
}

async function errorFrom(response) {
  let code = '';
  let message = `The Vodou app answered ${response.status}.`;
  try {
    const body = await response.json();
    code = body.error?.code || '';
    message = body.error?.message || message;
  } catch {
    // a body that is not JSON keeps the generic message
  }
  const kinds = { 400: 'bad_request', 401: 'not_paired', 403: 'refused', 404: 'not_found', 409: 'expired', 412: 'version' };
  return new BridgeError(kinds[response.status] || 'failed', message, response.status, code);
}

async function send(port, method, path, body, token) {
  const init = { method, headers: requestHeaders(method, token, body !== undefined) };
  if (body !== undefined) init.body = JSON.stringify(body);
  return fetchWithTimeout(`http://127.0.0.1:${port}${path}`, init, REQUEST_TIMEOUT_MS);
}

/**
 * One API call. `auth: false` is only for the pairing routes. A 401 drops the stored token, so
 * the panel asks to pair again.
 */
export async function call(method, path, body = undefined, { auth = true } = {}) {
  const token = auth ? await readToken() : '';
  if (auth && !token) throw new BridgeError('not_paired', 'This browser is not paired with the Vodou app yet.');
  let response;
  try {
    response = await send(await findApp(), method, path, body, token);
  } catch (error) {
    if (error instanceof BridgeError) throw error;
    foundPort = null; // the app may have restarted on another port: look again once
    try {
      response = await send(await findApp(), method, path, body, token);
    } catch (again) {
      if (again instanceof BridgeError) throw again;
      throw new BridgeError('not_running', 'The Vodou app is not answering.');
    }
  }
  if (response.ok) return response.json();
  const failure = await errorFrom(response);
  if (failure.kind === 'not_paired' && auth) await forgetToken();
  throw failure;
}
