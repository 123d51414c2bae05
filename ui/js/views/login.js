// login.js — the token prompt, shown when the server has tokens configured
// and this tab has none (or a refused one). The token goes to
// sessionStorage only: it ends with the tab.
import { html } from '../html.js';

function submit(ev, onSubmit) {
  ev.preventDefault();
  const t = ev.target.elements.token.value;
  if (t.trim()) onSubmit(t);
}

export function Login({ error, onSubmit }) {
  return html`<section class="login">
    <h1>Sign in to jobd</h1>
    <p>This server needs an API token (a line of its <code>--tokens</code> file).
      The token stays in this tab only and is sent as <code>Authorization: Bearer</code>.</p>
    <form onSubmit=${(ev) => submit(ev, onSubmit)}>
      <label for="token">API token</label>
      <input id="token" name="token" type="password" autocomplete="off" required
        autofocus spellcheck="false" />
      <button class="primary" type="submit">Sign in</button>
    </form>
    ${error && html`<p class="error" role="alert">${error}</p>`}
  </section>`;
}
