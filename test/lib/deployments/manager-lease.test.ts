import {sqliteStores} from '../../helpers/deployment-stores.js'
import {managerLeaseSuites} from './manager-lease-suites.js'

managerLeaseSuites([sqliteStores])
