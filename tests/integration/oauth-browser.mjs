// A person with a browser, for the upstream OAuth tests: follows a consent
// link the way a browser does (redirects, cookies per host), signs in and
// approves on the authorization server's own pages by submitting their
// forms. Plain HTTP requests with fetch; no page scripts are needed.

/** One browser: a cookie jar, redirects followed by hand. */
export class Browser {
  constructor() {
    this.jar = new Map(); // host -> Map(name -> value)
    this.visited = [];
  }

  cookieHeader(url) {
    const cookies = this.jar.get(new URL(url).host);
    return cookies ? [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') : '';
  }

  keepCookies(url, res) {
    const host = new URL(url).host;
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const cookies = this.jar.get(host) ?? new Map();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=thu, 01 jan 1970/i.test(a));
      if (expired) cookies.delete(name);
      else cookies.set(name, value);
      this.jar.set(host, cookies);
    }
  }

  /**
   * Requests `url` and follows redirects; the last page {status, url, text}.
   * `stopAt(url)` true: stops before requesting that URL ({status: 'stopped', url}).
   */
  async open(url, { method = 'GET', body, maxRedirects = 20, stopAt } = {}) {
    let current = url;
    let init = { method, body };
    for (let i = 0; i <= maxRedirects; i++) {
      if (stopAt && i > 0 && stopAt(current)) return { status: 'stopped', url: current, text: '' };
      const headers = { cookie: this.cookieHeader(current) };
      if (init.body) headers['content-type'] = 'application/x-www-form-urlencoded';
      const res = await fetch(current, { ...init, headers, redirect: 'manual' });
      this.keepCookies(current, res);
      this.visited.push({ url: current, status: res.status });
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        current = new URL(location, current).href;
        // 303 (and a 302 after a POST, as browsers do it) become a GET.
        if (res.status === 303 || res.status === 302) init = { method: 'GET' };
        continue;
      }
      return { status: res.status, url: current, text: await res.text(), headers: res.headers };
    }
    throw new Error(`too many redirects from ${url}`);
  }

  /** Fills and submits the page's first form; `fields` override its inputs. */
  async submit(page, fields = {}, opts = {}) {
    const form = page.text.match(/<form[^>]*action="([^"]*)"[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/i);
    if (!form) throw new Error(`no form on ${page.url} (HTTP ${page.status}): ${page.text.slice(0, 500)}`);
    const values = new URLSearchParams();
    for (const input of form[2].matchAll(/<input[^>]*>/gi)) {
      const name = input[0].match(/name="([^"]*)"/)?.[1];
      const value = input[0].match(/value="([^"]*)"/)?.[1] ?? '';
      if (name) values.set(name, value);
    }
    for (const [k, v] of Object.entries(fields)) values.set(k, v);
    return this.open(new URL(form[1].replace(/&amp;/g, '&'), page.url).href, { ...opts, method: 'POST', body: values.toString() });
  }
}

/**
 * Follows consent `link` as `login` would: signs in on the provider's page,
 * approves, lands back on the gateway. Returns the last page (the gateway's
 * callback answer) and the browser (to replay things with).
 */
export async function consent(link, login, browser = new Browser(), { stopAt } = {}) {
  let page = await browser.open(link, { stopAt });
  for (let step = 0; step < 4 && /<form/i.test(page.text); step++) {
    page = /name="login"/.test(page.text)
      ? await browser.submit(page, { login, password: 'any' }, { stopAt })
      : await browser.submit(page, {}, { stopAt });
  }
  return { page, browser };
}

/**
 * Follows consent `link` and declines on the provider's sign-in page (its
 * "Cancel" link): the provider sends the browser back to the gateway's
 * callback with error=access_denied. Returns that last page.
 */
export async function decline(link, browser = new Browser()) {
  const page = await browser.open(link);
  const cancel = page.text.match(/<a href="([^"]*\/abort)"/);
  if (!cancel) throw new Error(`no cancel link on ${page.url} (HTTP ${page.status}): ${page.text.slice(0, 500)}`);
  return browser.open(new URL(cancel[1].replace(/&amp;/g, '&'), page.url).href);
}
