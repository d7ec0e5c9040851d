// The site-mode gate (GOV-4). The app decides the mode; before anything touches a page the
// extension asks, and it sends nothing else about the page until the answer has arrived.

import { call, BridgeError } from './bridge.js';
import { hostOf } from './pagekey.js';

/** The app's resolution {host, mode, reason} for a tab URL; null when the tab is not a web page.
 * `active`: the question is about the active tab (an off site then dims the tray like the toolbar). */
export async function resolveMode(url, { active = false } = {}) {
  const host = hostOf(url);
  if (!host) return null;
  return call('GET', `/api/page-match/site-mode?host=${encodeURIComponent(host)}${active ? '&active=1' : ''}`);
}

/** Resolve and insist the mode allows `what`; otherwise a BridgeError('refused') and nothing sent. */
export async function requireMode(url, allowed, what) {
  const resolution = await resolveMode(url);
  if (!resolution) throw new BridgeError('no_page', `${what} needs a web page (http or https) in the tab.`);
  if (!allowed.has(resolution.mode)) {
    throw new BridgeError(
      'refused',
      `Vodou is ${resolution.mode} on ${resolution.host} (${resolution.reason}), so ${what} was not done.`,
      403,
      'policy_refused',
    );
  }
  return resolution;
}

/** Ask the app to change the mode for a host (the app may still refuse). */
export async function askForMode(host, mode) {
  return call('PUT', '/api/page-match/site-mode', { host, mode });
}
