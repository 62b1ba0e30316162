/**
 * Makes Node's own fetch install its dispatcher before the npm `undici` package loads. Whichever undici comes first
 * installs the process-wide dispatcher the global `fetch` uses; were it npm undici 7 on Node 20, the global `fetch`
 * of every other library in the process would go through it, and requests that set their own content-length
 * (@solana/kit's RPC calls) fail with "invalid content-length header". Node installs it on the first call, so one
 * call is made that goes nowhere (a `data:` URL, already aborted). gpunet's own calls pass their dispatcher.
 */
if (typeof globalThis.fetch === 'function') {
  globalThis.fetch('data:,', {signal: AbortSignal.abort()}).catch(() => {})
}
