/**
 * The in-memory note book behind the demo notes server. Bounded: a fixed number of notes of a
 * fixed size, the oldest note dropped first when full.
 */

export interface Note {
  id: number;
  title: string;
  body: string;
  createdAt: string;
}

export interface NotesStore {
  add(title: string, body: string): Note;
  list(): readonly Note[];
  get(id: number): Note | undefined;
  /** Notes whose title or body contains every word of `query` (case-insensitive), newest first. */
  search(query: string): Note[];
}

export interface NotesStoreOptions {
  maxNotes?: number;
  now?: () => Date;
}

export function createNotesStore(options: NotesStoreOptions = {}): NotesStore {
  const maxNotes = options.maxNotes ?? 500;
  const now = options.now ?? (() => new Date());
  const notes: Note[] = [];
  let nextId = 1;

  return {
    add(title, body) {
      const note: Note = { id: nextId++, title, body, createdAt: now().toISOString() };
      notes.push(note);
      if (notes.length > maxNotes) notes.splice(0, notes.length - maxNotes);
      return note;
    },
    list: () => notes,
    get: (id) => notes.find((note) => note.id === id),
    search(query) {
      const words = query.toLowerCase().split(/\s+/).filter((word) => word.length > 0);
      return notes
        .filter((note) => {
          const haystack = `${note.title}\n${note.body}`.toLowerCase();
          return words.every((word) => haystack.includes(word));
        })
        .reverse();
    },
  };
}
