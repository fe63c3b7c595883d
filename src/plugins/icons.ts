/**
 * A plugin's icons, from the manifest of the layouts that have them (Open Plugins' `logo`, an
 * `icons` array of MCP `Icon`s; the Agent Plugins manifest is closed and has neither).
 *
 * A host reading the customisation list may run on another machine, so a `./` image inside the
 * plugin is inlined as a `data:` URI (bounded, image types only); remote icons must be https
 * without credentials. Anything else is reported and left out: an icon is never worth failing a
 * plugin over.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { resolveWithin } from './containment.js';
import type { PluginDiagnostic } from './diagnostics.js';
import type { Icon } from './types.js';
import { isRecord } from './json-value.js';

export const MAX_ICONS = 8;
/** Largest image inlined from the plugin, and largest `data:` URI accepted as is. */
export const MAX_ICON_BYTES = 64 * 1024;

const IMAGE_TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
  '.svg': 'image/svg+xml',
};
const DATA_IMAGE = /^data:image\/(?:png|jpeg|webp|gif|svg\+xml)(?:;[a-z0-9=.+-]+)*,/i;

type SrcCheck = { ok: true; src: string; contentType?: string } | { ok: false; message: string };

async function resolveSrc(src: string, root: string): Promise<SrcCheck> {
  if (src.startsWith('./')) {
    const contentType = IMAGE_TYPES[path.extname(src).toLowerCase()];
    if (contentType === undefined) return { ok: false, message: 'is not a png, jpeg, webp, gif or svg image' };
    const resolved = await resolveWithin(root, path.join(root, src.slice(2)));
    if (!resolved.ok || !resolved.exists) return { ok: false, message: 'does not resolve to a file inside the plugin' };
    const info = await stat(resolved.path).catch(() => undefined);
    if (info?.isFile() !== true) return { ok: false, message: 'is not a regular file' };
    if (info.size > MAX_ICON_BYTES) return { ok: false, message: `is larger than ${MAX_ICON_BYTES} bytes` };
    const bytes = await readFile(resolved.path);
    if (bytes.length > MAX_ICON_BYTES) return { ok: false, message: `is larger than ${MAX_ICON_BYTES} bytes` };
    return { ok: true, src: `data:${contentType};base64,${bytes.toString('base64')}`, contentType };
  }
  if (src.startsWith('data:')) {
    if (!DATA_IMAGE.test(src) || src.length > MAX_ICON_BYTES) return { ok: false, message: `must be a data: image of at most ${MAX_ICON_BYTES} characters` };
    return { ok: true, src };
  }
  let url: URL;
  try {
    url = new URL(src);
  } catch {
    return { ok: false, message: 'must be a "./" image path, a data: image or an https URL' };
  }
  if (url.protocol !== 'https:' || url.username !== '' || url.password !== '') {
    return { ok: false, message: 'must be an https URL without credentials' };
  }
  return { ok: true, src: url.href };
}

async function iconFrom(raw: unknown, root: string): Promise<{ icon?: Icon; field?: string; message?: string }> {
  if (typeof raw === 'string') raw = { src: raw };
  if (!isRecord(raw) || typeof raw.src !== 'string') return { field: 'src', message: 'must be a string' };
  const src = await resolveSrc(raw.src, root);
  if (!src.ok) return { field: 'src', message: src.message };
  const declaredType = typeof raw.contentType === 'string' ? raw.contentType : typeof raw.mimeType === 'string' ? raw.mimeType : undefined;
  const contentType = src.contentType ?? declaredType;
  const sizes = Array.isArray(raw.sizes) && raw.sizes.every((s) => typeof s === 'string') ? (raw.sizes as string[]).slice(0, 16) : undefined;
  const theme = raw.theme === 'light' || raw.theme === 'dark' ? raw.theme : undefined;
  return {
    icon: {
      src: src.src,
      ...(contentType === undefined ? {} : { contentType }),
      ...(sizes === undefined ? {} : { sizes }),
      ...(theme === undefined ? {} : { theme }),
    },
  };
}

/** The manifest's icons (`icons`, then `logo`), at most MAX_ICONS; problems reported, never fatal. */
export async function readIcons(
  fields: Readonly<Record<string, unknown>>,
  root: string,
  where: { plugin: string; file: string },
): Promise<{ icons?: Icon[]; diagnostics: PluginDiagnostic[] }> {
  const diagnostics: PluginDiagnostic[] = [];
  const candidates: { raw: unknown; field: string }[] = [];
  if (fields.icons !== undefined) {
    if (Array.isArray(fields.icons)) fields.icons.forEach((raw, i) => candidates.push({ raw, field: `icons[${i}]` }));
    else diagnostics.push({ ...where, field: 'icons', message: 'must be an array of icons; ignored' });
  }
  if (fields.logo !== undefined) candidates.push({ raw: fields.logo, field: 'logo' });
  const icons: Icon[] = [];
  for (const candidate of candidates.slice(0, MAX_ICONS)) {
    const result = await iconFrom(candidate.raw, root);
    if (result.icon !== undefined) icons.push(result.icon);
    else diagnostics.push({ ...where, field: `${candidate.field}.${result.field}`, message: `${result.message}; icon ignored` });
  }
  if (candidates.length > MAX_ICONS) diagnostics.push({ ...where, field: 'icons', message: `more than ${MAX_ICONS} icons; the rest are ignored` });
  return icons.length > 0 ? { icons, diagnostics } : { diagnostics };
}
