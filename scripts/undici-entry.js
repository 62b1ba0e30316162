// What `import ... from 'undici'` in gpunet's code resolves to in the CLI bundle (scripts/build.js): the parts of
// undici gpunet uses, taken from undici's own files. undici's index also loads its mock agents, caches, cookie
// helpers, WebSocket and EventSource at every start, and the cookie helpers make Node load its own built-in copy
// of undici besides (they read `globalThis.Headers`): a sixth of a network command's start, for nothing it uses.
// The library build (tsc) and the tests import undici whole. If undici moves a file, the build fails here.
import api from 'undici/lib/api/index.js'
import Dispatcher from 'undici/lib/dispatcher/dispatcher.js'
import retry from 'undici/lib/interceptor/retry.js'

// As undici's index does: `dispatcher.request()` and its siblings.
Object.assign(Dispatcher.prototype, api)

export {default as Agent} from 'undici/lib/dispatcher/agent.js'
export {default as Client} from 'undici/lib/dispatcher/client.js'
export {default as EnvHttpProxyAgent} from 'undici/lib/dispatcher/env-http-proxy-agent.js'
export {fetch} from 'undici/lib/web/fetch/index.js'
export {FormData} from 'undici/lib/web/fetch/formdata.js'
export const interceptors = {retry}
