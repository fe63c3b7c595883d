/**
 * Demo MCP server over stdio (newline-delimited JSON, both protocol eras): a small note book.
 *
 *   node dist/demo/servers/notes-stdio.js
 *
 * Tools `add_note`, `list_notes`, `search_notes`; resources `notes://all` (every note) and
 * `notes://note/{id}`; prompt `summarize_notes`. Notes live in memory for the life of the process.
 */
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';
import { createNotesStore, type Note, type NotesStore } from '../lib/notes-store.js';

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });
const render = (note: Note) => `#${note.id} ${note.title} (${note.createdAt})\n${note.body}`;

function createNotesServer(store: NotesStore): McpServer {
  const server = new McpServer(
    { name: 'notes', version: '1.0.0' },
    {
      capabilities: { tools: {}, resources: { listChanged: true }, prompts: {} },
      instructions: 'A note book: add notes, list or search them, read them as resources.',
    },
  );

  server.registerTool(
    'add_note',
    {
      description: 'Adds a note and returns its id',
      inputSchema: z.object({ title: z.string().min(1).max(200), body: z.string().max(10_000) }),
    },
    ({ title, body }) => {
      const note = store.add(title, body);
      server.server.sendResourceListChanged().catch(() => undefined); // nobody listening is fine
      return text(`Added note #${note.id}`);
    },
  );
  server.registerTool('list_notes', { description: 'Lists every note, oldest first', annotations: { readOnlyHint: true } }, () =>
    text(store.list().length === 0 ? 'No notes yet.' : store.list().map(render).join('\n\n')),
  );
  server.registerTool(
    'search_notes',
    {
      description: 'Finds notes containing every word of the query (case-insensitive), newest first',
      inputSchema: z.object({ query: z.string().min(1).max(200) }),
      annotations: { readOnlyHint: true },
    },
    ({ query }) => {
      const found = store.search(query);
      return text(found.length === 0 ? `No note matches "${query}".` : found.map(render).join('\n\n'));
    },
  );

  server.registerResource(
    'all-notes',
    'notes://all',
    { description: 'Every note as JSON', mimeType: 'application/json' },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(store.list(), null, 2) }] }),
  );
  server.registerResource(
    'note',
    new ResourceTemplate('notes://note/{id}', {
      list: () => ({
        resources: store.list().map((note) => ({ uri: `notes://note/${note.id}`, name: note.title, mimeType: 'text/plain' })),
      }),
    }),
    { description: 'One note as text', mimeType: 'text/plain' },
    (uri, variables) => {
      const note = store.get(Number(variables.id));
      if (note === undefined) throw new Error(`No note with id ${String(variables.id)}`);
      return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: render(note) }] };
    },
  );

  server.registerPrompt('summarize_notes', { description: 'Asks the model to summarise every note' }, () => ({
    messages: [
      {
        role: 'user',
        content: {
          type: 'text',
          text:
            store.list().length === 0
              ? 'There are no notes yet. Say so briefly.'
              : `Summarise these notes in a few bullet points:\n\n${store.list().map(render).join('\n\n')}`,
        },
      },
    ],
  }));

  return server;
}

// One store per process: the stdio connection and the SDK's discarded era-probe instance share it.
const store = createNotesStore();
const handle = serveStdio(() => createNotesServer(store), {
  onerror: (error) => process.stderr.write(`[notes] ${error.message}\n`),
});
const shutdown = (): void => {
  void handle.close().finally(() => process.exit(0));
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
