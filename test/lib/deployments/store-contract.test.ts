import {sqliteStores} from '../../helpers/deployment-stores.js'
import {storeContractSuites} from './store-contract-suites.js'

storeContractSuites([sqliteStores])
