import {startStandinRpc} from '/work/wt-10/test/helpers/standin.ts'
import {openConnection, rpcCall} from '/work/wt-10/src/lib/market/rpc.ts'
import {PublicKey} from '/work/wt-10/node_modules/@solana/web3.js/lib/index.esm.js'
const rpc = await startStandinRpc()
rpc.rateLimited = 2
const c = openConnection(rpc.url)
try { console.log(await rpcCall(c, () => c.getAccountInfo(PublicKey.default))) } catch (e) { console.log('ERR', e, e.cause) }
await rpc.close()
process.exit(0)
