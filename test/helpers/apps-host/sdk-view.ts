// A view written the way most MCP Apps are: with @modelcontextprotocol/ext-apps's own App class
// (runs in Chromium, inside the view's sandboxed iframe; bundled into the view file's one inline
// script by test/e2e/apps-sdk-view.test.ts, since the default CSP allows no script from
// elsewhere). It shows the tool input and result the host sends, and its button calls
// counter.add through the host with App.callServerTool, showing that call's result or refusal.

import { App } from '@modelcontextprotocol/ext-apps';

const app = new App({ name: 'fastsvc-sdk-view', version: '1.0.0' });
const show = (id: string, text: string) => { document.getElementById(id)!.textContent = text; };

app.ontoolinput = (p) => show('input', JSON.stringify(p.arguments ?? {}));
app.ontoolresult = (r) => show('result', JSON.stringify(r.structuredContent ?? null));

document.getElementById('add')!.addEventListener('click', async () => {
  try {
    const r = await app.callServerTool({ name: 'counter.add', arguments: { by: 2 } });
    show('called', r.isError ? `error: ${JSON.stringify(r.content)}` : JSON.stringify(r.structuredContent));
  } catch (e) {
    show('called', `refused: ${(e as Error).message}`);
  }
});

document.getElementById('reset')!.addEventListener('click', async () => {
  try {
    const r = await app.callServerTool({ name: 'counter.reset', arguments: {} });
    show('reset-result', r.isError ? `error: ${JSON.stringify(r.content)}` : JSON.stringify(r.structuredContent));
  } catch (e) {
    show('reset-result', `refused: ${(e as Error).message}`);
  }
});

void app.connect();
