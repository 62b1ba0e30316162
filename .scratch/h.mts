import {createServer} from 'node:http'
import {httpFetch} from '/work/wt-10/src/lib/http.ts'
const s = createServer((req, res) => { req.resume(); req.on('end', () => { res.writeHead(429, {'retry-after': '0'}); res.end('slow down') }) })
await new Promise(r => s.listen(0, '127.0.0.1', r))
try { const r = await httpFetch(`http://127.0.0.1:${s.address().port}/`, {method: 'POST', body: '{}'}); console.log(r.status) } catch (e) { console.log('ERR', e, e.cause) }
s.close(); process.exit(0)
