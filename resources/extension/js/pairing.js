// Pairing: the app shows a one-time code, the person types it into the panel, and the token
// the app returns is kept in chrome.storage.local (never in a URL, never logged).

import { appStatus, call, choosePort, forgetToken, saveToken } from './bridge.js';

/** The browser's name for the app's Settings ("Chromium", "Microsoft Edge"), not its extension id. */
function browserName() {
  const brands = navigator.userAgentData?.brands || [];
  const named = brands.map((b) => b.brand).filter((b) => !/not.?a.?brand/i.test(b));
  return named.find((b) => b !== 'Chromium') || named[0] || 'Browser';
}

export async function startPairing() {
  return call('POST', '/api/pair/start', { extensionId: chrome.runtime.id }, { auth: false });
}

export async function completePairing(code) {
  const cleaned = String(code || '').replace(/[\s-]/g, '').toUpperCase();
  if (!cleaned) throw new Error('Type the code the Vodou app shows.');
  const answer = await call('POST', '/api/pair/complete', { code: cleaned, browser: browserName() }, { auth: false });
  await saveToken(answer.token);
  return { paired: true };
}

export async function unpair() {
  try {
    await call('DELETE', '/api/pair', {});
  } finally {
    await forgetToken();
  }
  return { paired: false };
}

export async function setPort(port) {
  const number = port === '' || port === null ? null : Number(port);
  if (number !== null && !(Number.isInteger(number) && number >= 1024 && number <= 65535)) {
    throw new Error('A port is a whole number between 1024 and 65535 (empty = find the app by itself).');
  }
  await choosePort(number);
  return appStatus();
}
