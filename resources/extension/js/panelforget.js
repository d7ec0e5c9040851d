// "Forget site…" in two clicks (GOV-7): the first runs the dry run and shows the count; the
// confirm is offered only for the window the app gives (expires_in, 8 s); then Undo.

import { $, ask, say, sayError, show } from './panelkit.js';

/** "1 memory", "3 memories". */
const memories = (n) => (n === 1 ? '1 memory' : `${n} memories`);

const SPEC_WINDOW_S = 8; // used only if the app's answer lacks a usable expires_in
let pending = null; // {token, deadline, timer}
let lastOp = null;

function closeConfirm(note = '') {
  if (pending) clearInterval(pending.timer);
  pending = null;
  show('forget-confirm', false);
  if (note) say(note);
}

function tick() {
  const left = Math.ceil((pending.deadline - Date.now()) / 1000);
  if (left <= 0) {
    closeConfirm('Forget site was not confirmed in time, so nothing was forgotten.');
    return;
  }
  $('forget-yes').textContent = `Confirm (${left} s)`;
}

export async function startForget(host, onChange) {
  closeConfirm();
  show('forget-done', false);
  try {
    const asked = Date.now(); // the app's window opens while the dry run runs: count from before it
    const dry = await ask('forgetDryRun', { host });
    const docs = dry.documents
      ? ` ${dry.documents === 1 ? '1 Library page' : `${dry.documents} Library pages`} from it kept.` : '';
    $('forget-count').textContent = `Forget ${memories(dry.facts)} from ${dry.host}?${docs}`;
    const windowS = Number(dry.expires_in) > 0 ? Number(dry.expires_in) : SPEC_WINDOW_S;
    pending = { token: dry.token, deadline: asked + windowS * 1000, timer: null };
    pending.timer = setInterval(tick, 250);
    tick();
    show('forget-confirm', Boolean(pending));
  } catch (error) {
    sayError(error);
  }
  $('forget-yes').onclick = () => confirmForget(onChange);
}

async function confirmForget(onChange) {
  if (!pending) return;
  const { token } = pending;
  closeConfirm();
  try {
    const done = await ask('forgetConfirm', { token });
    lastOp = done.op;
    $('forget-done-text').textContent = `Forgot ${memories(done.facts)} from ${done.host}.`;
    show('forget-done', true);
    $('forget-undo').onclick = () => undoForget(onChange);
    await onChange();
  } catch (error) {
    sayError(error);
  }
}

async function undoForget(onChange) {
  if (!lastOp) return;
  try {
    const undone = await ask('forgetUndo', { op: lastOp });
    lastOp = null;
    show('forget-done', false);
    say(Number.isInteger(undone.facts_restored) ? `Restored ${memories(undone.facts_restored)}.` : 'Restored the forgotten memories.');
    await onChange();
  } catch (error) {
    sayError(error);
  }
}
