// Creates demo/notes.db (the demo manifest's SQLite file) if it is missing.
// Run by `npm install` (prepare) so `npm start` needs no set-up.
import Database from 'better-sqlite3';
import { existsSync, mkdirSync } from 'node:fs';

const file = new URL('../demo/notes.db', import.meta.url).pathname;
if (!existsSync(file)) {
  mkdirSync(new URL('../demo/', import.meta.url).pathname, { recursive: true });
  const db = new Database(file);
  db.exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL, created_at TEXT NOT NULL DEFAULT (datetime('now')));
INSERT INTO notes (title, body) VALUES ('hello', 'fastsvc serves this row from SQLite.'), ('scopes', 'notes.write is needed to add a note.');`);
  db.close();
}
