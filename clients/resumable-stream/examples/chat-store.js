// The docs' @util/chat-store for the example: one JSON file per chat in CHAT_STORE, a folder the app instances
// share (any database does the same).
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const STORE = process.env.CHAT_STORE ?? './chats';
mkdirSync(STORE, { recursive: true });

export async function readChat(id) {
  try {
    return JSON.parse(readFileSync(path.join(STORE, `${id}.json`), 'utf8'));
  } catch {
    return { id, messages: [], activeStreamId: null };
  }
}

export async function saveChat({ id, messages, activeStreamId }) {
  const chat = await readChat(id);
  if (messages !== undefined) chat.messages = messages;
  if (activeStreamId !== undefined) chat.activeStreamId = activeStreamId;
  const file = path.join(STORE, `${id}.json`);
  writeFileSync(`${file}.${process.pid}.tmp`, JSON.stringify(chat));
  renameSync(`${file}.${process.pid}.tmp`, file);
}
