import bench from './bench/localnet.bench.ts'
await bench()
