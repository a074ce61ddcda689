// The checker's generic agent in a folder of its own: a `logbook worker --scripts` loads every script of its folder.
export { default } from '../fixture';
