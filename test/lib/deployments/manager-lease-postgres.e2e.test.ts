import {pgStores} from '../../helpers/deployment-stores-postgres.js'
import {managerLeaseSuites} from './manager-lease-suites.js'

managerLeaseSuites([pgStores])
