// Delivers panel messages to HANDLERS and answers {ok, data} or {ok: false, error}. Only the
// extension's own pages may ask; web pages cannot reach this listener at all (no externally
// connectable), and the sender check makes that explicit.

import { BridgeError } from './bridge.js';
import { HANDLERS } from './handlers.js';
import { iconStates } from './icon.js';
import { probes } from './probe.js';

function errorJson(error) {
  if (error instanceof BridgeError) return error.toJSON();
  return { kind: 'failed', message: error?.message || String(error) };
}

chrome.runtime.onMessage.addListener((message, sender, reply) => {
  if (sender.id !== chrome.runtime.id) return false;
  const handler = HANDLERS[message?.action];
  if (!handler) {
    reply({ ok: false, error: { kind: 'failed', message: `unknown action ${message?.action}` } });
    return false;
  }
  Promise.resolve()
    .then(() => handler(message))
    .then((data) => reply({ ok: true, data: data ?? null }), (error) => reply({ ok: false, error: errorJson(error) }));
  return true; // the answer comes asynchronously
});

// A read-only view for diagnostics (and the end-to-end tests): icon per tab, probes per page key.
self.vodouDiagnostics = () => ({
  icons: Object.fromEntries(iconStates),
  probes: Object.fromEntries(probes.requests),
});
