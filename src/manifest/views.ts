// The MCP Apps views a manifest declares (tools[].ui), planned from the manifest alone.
// Guarantees: pure — no files, sockets or env; every problem is reported at the node it
// concerns; each view is one ui:// resource however many tools name it (a file view by its
// path, a template view by its tool), and those tools must give it the same settings; a
// view's URI is unique among views and declared resources; a view file is a relative
// .html/.htm path that stays inside the manifest's folder (the file itself is checked when
// assembled); CSP entries are origins (csp-origins.ts); a view's required scopes are
// declared, carry no {{arg}} pattern, and are required by every tool that names it — by
// default exactly the scopes all of those tools require, so whoever may call one of them
// may read its view.

import { posix } from 'node:path';
import type { ErrorCode } from '../errors.js';
import type { Tool, ToolView } from '../core/manifest-types.gen.js';
import type { UiResourceMeta, UiVisibility } from '../core/types.js';
import { isPattern } from '../core/guard.js';
import { CSP_LISTS, originProblem } from './csp-origins.js';
import { templateProblem } from '../runtime/view-shell.js';

type Path = (string | number)[];
type Problem = (code: ErrorCode, path: Path, message: string) => void;

export interface ViewPlan {
  readonly uri: string;
  readonly title: string;
  readonly source: { readonly file: string } | { readonly template: string };
  /** The resource's _meta.ui (the extension's camelCase names). */
  readonly meta: UiResourceMeta;
  readonly requiredScopes: readonly string[];
  /** The tools that name it, in manifest order. */
  readonly tools: readonly string[];
  /** The manifest path of the first tool's `ui`, where problems with the view's file are reported. */
  readonly at: readonly (string | number)[];
}

/** What a tool's listing says about its view (_meta.ui): the view's URI and who may see the tool. */
export interface ToolUiPlan {
  readonly resourceUri?: string;
  readonly visibility: readonly UiVisibility[];
}

export interface ViewsPlan {
  readonly views: readonly ViewPlan[];
  readonly tools: ReadonlyMap<string, ToolUiPlan>;
}

/** The settings that belong to the view (the resource) rather than to the tool. */
const VIEW_SETTINGS = ['title', 'csp', 'permissions', 'prefers_border', 'domain', 'required_scopes'] as const;

export function planViews(tools: readonly Tool[], resourceUris: ReadonlySet<string>, problem: Problem): ViewsPlan {
  const byUri = new Map<string, { plan: ViewPlan; ui: ToolView; key: string; toolScopes: (readonly string[])[] }>();
  const toolUi = new Map<string, ToolUiPlan>();
  tools.forEach((t, i) => {
    const ui = t.ui;
    if (!ui) return;
    const at: Path = ['tools', i, 'ui'];
    const visibility = ui.visibility!; // the schema's default fills it in
    checkCsp(ui, at, t.name, problem);
    if (ui.view !== undefined && ui.template !== undefined) return problem('VIEW_INVALID', at, `tool ${t.name}: give ui.view (a file) or ui.template, not both`);
    if (ui.view === undefined && ui.template === undefined) {
      // Without a view, ui only says something when it drops model.
      if (visibility.includes('model')) return problem('VIEW_INVALID', at, `tool ${t.name}: ui needs view (a file), template, or visibility: [app]`);
      const stray = (['uri', ...VIEW_SETTINGS] as const).find((k) => ui[k] !== undefined);
      if (stray) return problem('VIEW_INVALID', [...at, stray], `tool ${t.name}: ui.${stray} describes a view, and this ui names none (give view or template)`);
      toolUi.set(t.name, { visibility });
      return;
    }
    let uri = ui.uri;
    let source: ViewPlan['source'];
    if (ui.view !== undefined) {
      const rel = viewPath(ui.view);
      if (!rel) return problem('VIEW_INVALID', [...at, 'view'], `tool ${t.name}: ui.view ${JSON.stringify(ui.view)} must be a relative path inside the manifest's folder`);
      if (!/\.html?$/i.test(rel)) return problem('VIEW_INVALID', [...at, 'view'], `tool ${t.name}: ui.view ${JSON.stringify(ui.view)} is not an .html or .htm file`);
      uri ??= 'ui://' + rel.split('/').map(encodeURIComponent).join('/');
      source = { file: rel };
    } else {
      const why = templateProblem(ui.template!);
      if (why) return problem('VIEW_INVALID', [...at, 'template'], `tool ${t.name}: ui.template: ${why}`);
      uri ??= `ui://${t.name}`;
      source = { template: ui.template! };
    }
    if (resourceUris.has(uri)) return problem('VIEW_INVALID', [...at, ui.uri !== undefined ? 'uri' : 'view'], `tool ${t.name}: the view's URI ${uri} is also a resource's`);
    const toolScopes = (t.required_scopes ?? []).filter((s) => !isPattern(s));
    const what = JSON.stringify(source);
    const key = JSON.stringify([what, ...VIEW_SETTINGS.map((k) => ui[k] ?? null)]);
    const seen = byUri.get(uri);
    if (seen) {
      if (seen.key !== key) {
        const same = what === JSON.stringify(seen.plan.source);
        return problem('VIEW_INVALID', at, same
          ? `tool ${t.name}: the view ${uri} is also named by tool ${seen.plan.tools[0]} with other settings (${VIEW_SETTINGS.join(', ')} must be the same on every tool that names it)`
          : `tool ${t.name}: the view URI ${uri} is already another view's (tool ${seen.plan.tools[0]})`);
      }
      (seen.plan.tools as string[]).push(t.name);
      seen.toolScopes.push(toolScopes);
    } else {
      const plan: ViewPlan = {
        uri,
        title: ui.title ?? t.title ?? t.name,
        source,
        meta: resourceMeta(ui),
        requiredScopes: [],
        tools: [t.name],
        at,
      };
      byUri.set(uri, { plan, ui, key, toolScopes: [toolScopes] });
    }
    toolUi.set(t.name, { resourceUri: uri, visibility });
  });
  const views = [...byUri.values()].map(({ plan, ui, toolScopes }) => {
    const common = toolScopes.reduce((acc, s) => acc.filter((x) => s.includes(x)));
    if (ui.required_scopes === undefined) return { ...plan, requiredScopes: common };
    ui.required_scopes.forEach((s, j) => {
      if (!common.includes(s)) {
        const tool = plan.tools[toolScopes.findIndex((ts) => !ts.includes(s))];
        problem('VIEW_SCOPE_EXCEEDS_TOOL', [...plan.at, 'required_scopes', j], `view ${plan.uri} requires scope ${s}, which tool ${tool} does not: a caller of ${tool} could not read its view`);
      }
    });
    return { ...plan, requiredScopes: [...ui.required_scopes] };
  });
  return { views, tools: toolUi };
}

/** A view file's path relative to the manifest's folder (POSIX, normalised), or undefined when it would leave it. */
function viewPath(given: string): string | undefined {
  if (given.includes('\\') || given.includes('\0') || posix.isAbsolute(given) || /^[A-Za-z]:/.test(given)) return undefined;
  const rel = posix.normalize(given);
  return rel === '.' || rel === '..' || rel.startsWith('../') || rel.endsWith('/') ? undefined : rel;
}

function checkCsp(ui: ToolView, at: Path, tool: string, problem: Problem): void {
  for (const list of CSP_LISTS) {
    ui.csp?.[list]?.forEach((entry, j) => {
      const why = originProblem(entry, list);
      if (why) problem('VIEW_CSP_INVALID', [...at, 'csp', list, j], `tool ${tool}: ui.csp.${list}: ${why}`);
    });
  }
}

function resourceMeta(ui: ToolView): UiResourceMeta {
  const c = ui.csp;
  const csp = c && {
    ...(c.connect_domains && { connectDomains: [...c.connect_domains] }),
    ...(c.resource_domains && { resourceDomains: [...c.resource_domains] }),
    ...(c.frame_domains && { frameDomains: [...c.frame_domains] }),
    ...(c.base_uri_domains && { baseUriDomains: [...c.base_uri_domains] }),
  };
  return {
    ...(csp && { csp }),
    ...(ui.permissions && { permissions: Object.fromEntries(ui.permissions.map((p) => [p, {}])) }),
    ...(ui.domain !== undefined && { domain: ui.domain }),
    ...(ui.prefers_border !== undefined && { prefersBorder: ui.prefers_border }),
  };
}
