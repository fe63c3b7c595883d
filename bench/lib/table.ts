/** Renders rows of cells as an aligned plain-text table or a Markdown table. */

export type Align = 'left' | 'right';

export interface Column {
  title: string;
  align?: Align;
}

export function renderTable(columns: readonly Column[], rows: readonly (readonly string[])[], style: 'text' | 'markdown'): string {
  const widths = columns.map((col, i) => Math.max(col.title.length, ...rows.map((r) => (r[i] ?? '').length)));
  const pad = (text: string, i: number) => {
    const width = widths[i]!;
    return columns[i]!.align === 'right' ? text.padStart(width) : text.padEnd(width);
  };
  const line = (cells: readonly string[]) =>
    style === 'markdown' ? `| ${cells.map(pad).join(' | ')} |` : cells.map(pad).join('  ');
  const rule =
    style === 'markdown'
      ? `|${widths.map((w, i) => (columns[i]!.align === 'right' ? `${'-'.repeat(w + 1)}:` : `${'-'.repeat(w + 2)}`)).join('|')}|`
      : widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(columns.map((c) => c.title)), rule, ...rows.map((r) => line(columns.map((_, i) => r[i] ?? '')))].join('\n');
}
