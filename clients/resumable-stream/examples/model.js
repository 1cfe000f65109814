// The example's model: the AI SDK's mock (ai/test) answering "token-1 token-2 ... token-N " one delta every
// MOCK_DELAY_MS (default 50). A real app uses its provider here, e.g. openai('gpt-4o-mini').
// modelState counts the deltas it gave and whether its stream was cancelled (the tests read it).
// MOCK_HOLD_FILE (tests only): while that file exists, the model waits before its delta MOCK_HOLD_AT (default
// half of MOCK_TOKENS), so a test can reload a page with the answer still in progress for as long as it likes.
import { existsSync } from 'node:fs';
import { MockLanguageModelV4 } from 'ai/test';

const TOKENS = Number(process.env.MOCK_TOKENS ?? 40);
const DELAY_MS = Number(process.env.MOCK_DELAY_MS ?? 50);
const HOLD_FILE = process.env.MOCK_HOLD_FILE;
const HOLD_AT = Number(process.env.MOCK_HOLD_AT ?? Math.ceil(TOKENS / 2));
export const modelState = { emitted: 0, cancelled: false };

export const model = new MockLanguageModelV4({
  doStream: async () => {
    let i = 0;
    let timer;
    const stream = new ReadableStream({
      start(c) {
        c.enqueue({ type: 'stream-start', warnings: [] });
        c.enqueue({ type: 'text-start', id: 't1' });
      },
      async pull(c) {
        await new Promise((r) => { timer = setTimeout(r, DELAY_MS); });
        while (HOLD_FILE && i + 1 === HOLD_AT && existsSync(HOLD_FILE) && !modelState.cancelled) {
          await new Promise((r) => { timer = setTimeout(r, 20); });
        }
        if (i < TOKENS) {
          i++;
          modelState.emitted++;
          c.enqueue({ type: 'text-delta', id: 't1', delta: `token-${i} ` });
          return;
        }
        c.enqueue({ type: 'text-end', id: 't1' });
        c.enqueue({
          type: 'finish',
          finishReason: { unified: 'stop', raw: 'stop' },
          usage: {
            inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
            outputTokens: { total: TOKENS, text: TOKENS, reasoning: 0 },
          },
        });
        c.close();
      },
      cancel() {
        clearTimeout(timer);
        modelState.cancelled = true;
      },
    });
    return { stream };
  },
});
