// The example's model: the AI SDK's mock (ai/test) answering "token-1 token-2 ... token-N " one delta every
// MOCK_DELAY_MS (default 50). A real app uses its provider here, e.g. openai('gpt-4o-mini').
// modelState counts the deltas it gave and whether its stream was cancelled (the tests read it).
import { MockLanguageModelV4 } from 'ai/test';

const TOKENS = Number(process.env.MOCK_TOKENS ?? 40);
const DELAY_MS = Number(process.env.MOCK_DELAY_MS ?? 50);
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
