// Next.js's `after` for a long-running Node server: the promise just runs (errors are logged).
export const after = (promise) => {
  promise.catch((e) => console.error(e));
};
