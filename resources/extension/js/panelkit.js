// Small helpers the side panel shares: talking to the worker and saying things plainly.

export const $ = (id) => document.getElementById(id);

/** Ask the service worker; resolves to data or rejects with {kind, message}. */
export async function ask(action, fields = {}) {
  const answer = await chrome.runtime.sendMessage({ action, ...fields });
  if (!answer) throw { kind: 'failed', message: 'The extension did not answer.' };
  if (!answer.ok) throw answer.error;
  return answer.data;
}

// What the person can do about each kind of problem.
const TODO = {
  not_running: 'Start the Vodou app (or run "vodou serve" in a terminal), then press Try again.',
  not_paired: 'Pair this browser: press Start pairing and type the code the Vodou app shows.',
  version: 'This extension and the Vodou app are different versions. Update both to the same release.',
  no_access: '',
  refused: '',
};

export function todoFor(error) {
  return TODO[error?.kind] ?? '';
}

export function say(text, bad = false) {
  const box = $('message');
  box.textContent = text;
  box.classList.toggle('bad', bad);
  box.hidden = !text;
}

export function sayError(error) {
  const todo = todoFor(error);
  say(todo ? `${error.message} ${todo}` : error?.message || String(error), true);
}

export function show(id, visible) {
  $(id).hidden = !visible;
}

function itemText(text, meta) {
  const li = document.createElement('li');
  const main = document.createElement('span');
  main.textContent = text;
  li.append(main);
  if (meta) {
    const small = document.createElement('span');
    small.className = 'meta';
    small.textContent = meta;
    li.append(small);
  }
  return li;
}

/** Fill a list; each entry once (by id). Returns how many were shown. */
export function fillList(listId, emptyId, entries, render) {
  const list = $(listId);
  list.replaceChildren();
  const seen = new Set();
  for (const entry of entries) {
    const id = entry.id ?? JSON.stringify(entry);
    if (seen.has(id)) continue;
    seen.add(id);
    const [text, meta] = render(entry);
    const li = itemText(text, meta);
    li.dataset.id = String(id);
    list.append(li);
  }
  if (emptyId) show(emptyId, seen.size === 0);
  return seen.size;
}
