// ProbeCache: the toolbar colour of a page comes from GET /api/page-match/probe, asked at most
// once per page key per 30 s (a burst of tab switches is one request per page). Concurrent
// askers for one key share the request in flight. Our own writes forget the key at once.

import { call } from './bridge.js';
import { PROBE_TTL_MS } from './config.js';
import { pageKey } from './pagekey.js';

class ProbeCache {
  constructor(ttlMs) {
    this.ttlMs = ttlMs;
    this.entries = new Map(); // page key -> {state, at} or {pending}
    this.requests = new Map(); // page key -> how many probes were sent (read by tests)
  }

  /** 'green' | 'none' | null (null: the app says the site is off). Call only after the mode check. */
  async stateFor(url) {
    const key = pageKey(url);
    const entry = this.entries.get(key);
    if (entry?.pending) return entry.pending;
    if (entry && Date.now() - entry.at < this.ttlMs) return entry.state;
    const pending = this.ask(url, key);
    this.entries.set(key, { pending });
    try {
      const state = await pending;
      this.entries.set(key, { state, at: Date.now() });
      return state;
    } catch (error) {
      this.entries.delete(key);
      throw error;
    }
  }

  async ask(url, key) {
    this.requests.set(key, (this.requests.get(key) || 0) + 1);
    const answer = await call('GET', `/api/page-match/probe?url=${encodeURIComponent(url)}`);
    return answer.state ?? null;
  }

  forget(url) {
    this.entries.delete(pageKey(url));
  }

  clear() {
    this.entries.clear();
  }
}

export const probes = new ProbeCache(PROBE_TTL_MS);
