/**
 * Where a reader keeps "which run am I reading, and how far did I get", so a reloaded page
 * can pick the run up again. Any object with the Web Storage methods `getItem`, `setItem`
 * and `removeItem` works (localStorage, sessionStorage, or your own).
 *
 * @module
 */

/**
 * @typedef {object} RunStore
 * @property {(key: string) => string|null} getItem
 * @property {(key: string, value: string) => void} setItem
 * @property {(key: string) => void} removeItem
 */

/**
 * @typedef {object} StoredRun
 * @property {string} runId
 * @property {number} lastEventId  the id of the last event handed on (0: none yet)
 * @property {string} [token]     the subscribe token it was read with (scoped to that run)
 * @property {string} [threadId]
 */

/**
 * An in-memory store: what Node gets by default, and handy in tests.
 * @returns {RunStore & { map: Map<string, string> }}
 */
export function memoryStorage() {
  const map = new Map();
  return {
    map,
    getItem: (key) => (map.has(key) ? map.get(key) : null),
    setItem: (key, value) => void map.set(key, String(value)),
    removeItem: (key) => void map.delete(key),
  };
}

/**
 * The default store: `globalThis.localStorage` where there is one (browsers), else memory.
 * @returns {RunStore}
 */
export function defaultStorage() {
  try {
    const ls = /** @type {any} */ (globalThis).localStorage;
    if (ls && typeof ls.getItem === "function") return ls;
  } catch {
    // localStorage access can throw (disabled cookies, sandboxed frames): fall back.
  }
  return memoryStorage();
}

/**
 * @param {RunStore|null} storage
 * @param {string} key
 * @returns {StoredRun|null}
 */
export function loadRun(storage, key) {
  if (!storage) return null;
  let raw;
  try {
    raw = storage.getItem(key);
  } catch {
    return null;
  }
  if (!raw) return null;
  try {
    const value = JSON.parse(raw);
    if (value && typeof value.runId === "string" && Number.isSafeInteger(value.lastEventId) && value.lastEventId >= 0) {
      return value;
    }
  } catch {
    // a corrupt entry is as good as none
  }
  return null;
}

/**
 * @param {RunStore|null} storage
 * @param {string} key
 * @param {StoredRun} run
 */
export function saveRun(storage, key, run) {
  if (!storage) return;
  try {
    storage.setItem(key, JSON.stringify(run));
  } catch {
    // quota or privacy mode: resuming after reload is best effort
  }
}

/**
 * @param {RunStore|null} storage
 * @param {string} key
 */
export function clearRun(storage, key) {
  if (!storage) return;
  try {
    storage.removeItem(key);
  } catch {
    // ignore
  }
}
