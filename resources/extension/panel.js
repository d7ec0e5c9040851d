// The side panel: pairing, the page's mode, "From this page", the note box with Use (page text
// for one message, never stored), Library, approvals and Forget site…. All work goes through
// the service worker (js/handlers.js); this file only renders and reacts to clicks.

import { startForget } from './js/panelforget.js';
import { $, ask, fillList, say, sayError, show, todoFor } from './js/panelkit.js';

const state = { page: null, resolution: null, attached: null, busy: false, justPaired: false };
const MODE_WORDS = { off: 'Off', suggest: 'Suggest', collect: 'Collect' };

function showProblem(error) {
  $('problem-text').textContent = error.message;
  $('problem-todo').textContent = todoFor(error);
  show('problem', error.kind !== 'not_paired');
  show('pairing', error.kind === 'not_paired');
  show('port-box', error.kind === 'not_running' || error.kind === 'not_paired');
}

function renderHeader(page, resolution) {
  // Chrome already titles the side panel "Vodou": the heading names the site instead.
  $('page-title').textContent = resolution?.host || 'This page';
  $('page-line').textContent = page ? `${page.title || page.url}` : 'No web page in the tab.';
  const badge = $('mode-badge');
  badge.hidden = !resolution;
  if (resolution) {
    badge.textContent = MODE_WORDS[resolution.mode] || resolution.mode;
    badge.className = `badge ${resolution.mode}`;
  }
}

function renderModes(resolution) {
  for (const button of document.querySelectorAll('#mode-row [data-mode]')) {
    button.setAttribute('aria-checked', String(button.dataset.mode === resolution.mode));
  }
}

function renderProjects(projects, chosen) {
  const select = $('project');
  const names = [...new Set([...(projects || []), ...(chosen ? [chosen] : [])])].sort();
  select.replaceChildren(new Option('No project (global)', ''), ...names.map((name) => new Option(name, name)));
  select.value = chosen || '';
}

function projectLabel(memory) {
  return memory.project ? `project ${memory.project}` : 'global';
}

function renderMatch(match) {
  const resolution = match.resolution;
  const off = resolution?.mode === 'off';
  show('off', Boolean(off));
  show('page', Boolean(resolution) && !off);
  if (!resolution) return;
  $('off-why').textContent = `${resolution.host}: ${resolution.reason}.`;
  $('mode-why').textContent = `${resolution.host}: ${MODE_WORDS[resolution.mode]} (${resolution.reason}).`;
  renderModes(resolution);
  renderProjects(match.projects, match.project);
  const saved = (f) => (f.created_at ? ` · saved ${f.created_at.slice(0, 10)}` : '');
  fillList('facts', 'facts-empty', match.facts, (f) => [f.text, `${projectLabel(f)} · ${f.kind}${saved(f)}`]);
  fillList('documents', 'documents-empty', match.documents,
    (d) => [d.title || d.page_url, `${projectLabel(d)} · ${d.chunk_count ?? '?'} parts`]);
  const related = fillList('related', null, match.related, (f) => [f.text, `${projectLabel(f)} · ${f.source_host || ''}`]);
  show('related-box', related > 0);
  const writes = resolution.mode === 'collect';
  $('send').disabled = !writes && !state.attached;
  $('library').disabled = !writes;
}

function renderAttached() {
  show('attached', Boolean(state.attached));
  $('send').textContent = state.attached ? 'Send with page' : 'Save';
}

async function refresh() {
  try {
    const view = await ask('pageState');
    show('problem', false);
    show('pairing', !view.status.paired);
    show('port-box', !view.status.paired);
    show('paired-next', view.status.paired && state.justPaired && !view.page);
    show('unpair', view.status.paired);
    if (state.attached && state.attached.url !== view.page?.url) state.attached = null;
    state.page = view.page;
    state.resolution = view.match?.resolution ?? null;
    renderHeader(view.page, state.resolution);
    renderAttached();
    if (!view.status.paired) {
      show('page', false);
      show('off', false);
      return;
    }
    if (view.match) renderMatch(view.match);
    else {
      show('page', false);
      show('off', false);
    }
    await refreshApprovals();
  } catch (error) {
    show('page', false);
    show('off', false);
    show('unpair', error.kind !== 'not_running' && error.kind !== 'not_paired');
    showProblem(error);
  }
}

async function refreshApprovals() {
  const { approvals } = await ask('approvals');
  show('approvals-box', approvals.length > 0);
  fillList('approvals', null, approvals, (a) => [`${a.tool}: ${describeArguments(a.arguments)}`, a.reason || '']);
  for (const li of $('approvals').children) addDecisionButtons(li, li.dataset.id);
}

function describeArguments(args) {
  if (!args || typeof args !== 'object') return '';
  return args.text || args.host || args.url || JSON.stringify(args);
}

function addDecisionButtons(li, id) {
  for (const decision of ['approve', 'deny']) {
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = decision === 'approve' ? 'Approve' : 'Deny';
    button.dataset.decision = decision;
    button.onclick = () => run(async () => {
      await ask('decideApproval', { id, decision });
      say(decision === 'approve' ? 'Approved.' : 'Denied; it was dropped.');
    });
    li.append(' ', button);
  }
}

/** Run one click's work, then redraw; errors are said, never thrown at the person. */
async function run(work) {
  if (state.busy) return;
  state.busy = true;
  try {
    await work();
  } catch (error) {
    sayError(error);
  } finally {
    state.busy = false;
  }
  await refresh();
}

async function sendNote() {
  const text = $('note').value.trim();
  if (!text) {
    say('Type a note first.', true);
    return;
  }
  if (state.attached) {
    const pageContext = state.attached.text;
    state.attached = null; // one message only, whatever happens next
    renderAttached();
    const turn = await ask('sendTurn', { content: text, pageContext });
    const parked = (turn.pending || []).length;
    say(parked ? 'Sent with the page. Saving it waits for your approval below.' : 'Sent with the page.');
  } else {
    await ask('saveNote', { text });
    say('Saved the note for this page.');
  }
  $('note').value = '';
}

async function usePage() {
  state.attached = await ask('readForTurn');
  renderAttached();
  say(`Attached ${state.attached.text.length} characters of this page to your next message.`);
}

let suggestTimer = null;
function suggestSoon() {
  clearTimeout(suggestTimer);
  const prefix = $('note').value.trim();
  if (prefix.length < 3 || !state.resolution || state.resolution.mode === 'off') {
    show('suggestions', false);
    return;
  }
  suggestTimer = setTimeout(async () => {
    try {
      const { suggestions } = await ask('suggest', { prefix });
      show('suggestions', fillList('suggestions', null, suggestions, (s) => [s.text, '']) > 0);
    } catch {
      show('suggestions', false);
    }
  }, 300);
}

function wire() {
  $('retry').onclick = () => run(async () => {});
  $('pair-start').onclick = () => run(async () => {
    const started = await ask('pairStart');
    say(`The Vodou app now shows a code of ${started.codeLength} characters (valid ${Math.round(started.expiresIn / 60)} min). Type it in the box above and press Pair.`);
  });
  $('pair-form').onsubmit = (event) => {
    event.preventDefault();
    run(async () => {
      await ask('pairComplete', { code: $('pair-code').value });
      $('pair-code').value = '';
      state.justPaired = true;
      await refresh(); // the panel shows the paired state before it says so
      say('Paired with the Vodou app. Open a web page: memories you saved from it are listed here, and the toolbar icon turns green.');
    });
  };
  $('port-form').onsubmit = (event) => {
    event.preventDefault();
    run(async () => {
      await ask('setPort', { port: $('port').value.trim() });
      say('Found the Vodou app.');
    });
  };
  $('unpair').onclick = () => run(async () => {
    await ask('unpair');
    await refresh();
    say('This browser is no longer paired.');
  });
  $('mode-suggest').onclick = () => changeMode('suggest');
  $('mode-collect').onclick = () => changeMode('collect');
  for (const button of document.querySelectorAll('#mode-row [data-mode]')) {
    button.onclick = () => changeMode(button.dataset.mode);
  }
  $('send').onclick = () => run(sendNote);
  $('use').onclick = () => run(usePage);
  $('detach').onclick = () => {
    state.attached = null;
    renderAttached();
  };
  $('library').onclick = () => run(async () => {
    await ask('addToLibrary');
    say('Added this page to your Vodou Library.');
  });
  $('forget').onclick = () => state.resolution && startForget(state.resolution.host, refresh);
  $('note').oninput = suggestSoon;
  $('project').onchange = () => run(async () => {
    const project = $('project').value;
    await ask('setProject', { project });
    say(project ? `New notes on this site go to project ${project}.` : 'New notes on this site are global.');
  });
}

function changeMode(mode) {
  if (!state.resolution) return;
  const host = state.resolution.host;
  run(async () => {
    const resolution = await ask('setSiteMode', { host, mode });
    say(`Vodou is now ${MODE_WORDS[resolution.mode]} on ${resolution.host}.`);
  });
}

function listen() {
  chrome.tabs.onActivated.addListener(() => setTimeout(refresh, 150));
  chrome.tabs.onUpdated.addListener((tabId, change) => {
    if (change.status === 'complete' && tabId === state.page?.tabId) refresh();
  });
  chrome.storage.onChanged.addListener((changes, area) => {
    if (area === 'session' && changes.vodouLastOutcome?.newValue) {
      const outcome = changes.vodouLastOutcome.newValue;
      say(outcome.text, !outcome.ok);
      refresh();
    }
  });
  setInterval(() => {
    if (!document.hidden && !state.busy) refreshApprovals().catch(() => {});
  }, 5000);
}

wire();
listen();
refresh();
