// Hosts and page keys of tab URLs. A page key is the URL without fragment and tracking
// parameters: the same identity the app uses for its probe cache and "From this page".

const TRACKING = new Set([
  'fbclid', 'gclid', 'dclid', 'gbraid', 'wbraid', 'msclkid', 'mc_cid', 'mc_eid', 'igshid',
  'yclid', '_ga', '_gl', 'ref_src', 'spm', 'si', 'oly_anon_id', 'oly_enc_id', 'vero_id',
  'mkt_tok', '__hssc', '__hstc', '__hsfp', 'hsctatracking',
]);

/** The URL object of a web page, or null for anything that is not http(s). */
export function webUrl(url) {
  if (typeof url !== 'string' || !url) return null;
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed : null;
}

/** Host of a web page URL (lower case, punycode), or null when the tab is not a web page. */
export function hostOf(url) {
  const parsed = webUrl(url);
  return parsed ? parsed.hostname.replace(/\.$/, '') : null;
}

/** Page identity for caching: no fragment, no utm_* or click ids. Null for non-web tabs. */
export function pageKey(url) {
  const parsed = webUrl(url);
  if (!parsed) return null;
  parsed.hash = '';
  parsed.username = '';
  parsed.password = '';
  for (const name of [...parsed.searchParams.keys()]) {
    const lower = name.toLowerCase();
    if (lower.startsWith('utm_') || TRACKING.has(lower)) parsed.searchParams.delete(name);
  }
  return parsed.href.replace(/\?$/, '');
}
