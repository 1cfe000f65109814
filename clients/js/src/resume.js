/**
 * `followRun`: readRun plus a stored cursor, for apps that render events themselves (no
 * AG-UI): the run id and the id of the last event handed on are written to storage after
 * each event, so a reloaded page continues with exactly the next event (`Last-Event-ID`).
 * The entry is removed when the run ends or the relay says it is gone (404/410).
 *
 * @module
 */

import { readRun, TERMINAL_EVENT_TYPES } from "./reader.js";
import { RunGoneError, RunNotFoundError } from "./errors.js";
import { clearRun, defaultStorage, loadRun, saveRun } from "./storage.js";

/**
 * @typedef {Omit<import("./reader.js").ReadRunOptions, "runId"> & {
 *   runId?: string,
 *   storage?: import("./storage.js").RunStore | null,
 *   storageKey: string,
 * }} FollowRunOptions
 * With no runId, the stored run (if any) is continued; with a runId different from the stored
 * one, that run is read from the start (or from `lastEventId`).
 */

/**
 * @param {FollowRunOptions} options
 * @returns {AsyncGenerator<import("./reader.js").RunEvent, void, undefined>}
 */
export async function* followRun(options) {
  const storage = options.storage === undefined ? defaultStorage() : options.storage;
  const key = options.storageKey;
  if (typeof key !== "string" || key.length === 0) throw new TypeError("followRun: storageKey is required");
  const stored = loadRun(storage, key);
  const runId = options.runId ?? stored?.runId;
  if (!runId) return;
  const sameRun = stored?.runId === runId;
  const lastEventId = options.lastEventId ?? (sameRun ? stored.lastEventId : 0);
  const token = options.token ?? (sameRun ? stored.token : undefined);
  const tokenForStorage = typeof token === "string" ? token : undefined;
  saveRun(storage, key, { runId, lastEventId, token: tokenForStorage });
  try {
    for await (const item of readRun({ ...options, runId, lastEventId, token })) {
      if (TERMINAL_EVENT_TYPES.includes(item.event?.type)) clearRun(storage, key);
      else saveRun(storage, key, { runId, lastEventId: item.id, token: tokenForStorage });
      yield item;
    }
    if (!options.signal?.aborted) clearRun(storage, key);
  } catch (error) {
    if (error instanceof RunGoneError || error instanceof RunNotFoundError) clearRun(storage, key);
    throw error;
  }
}
