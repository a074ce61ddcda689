// Mocha entry for the e2e smoke suite, run inside the extension host; mocha comes from the repo named by LOGBOOK_REPO_ROOT.
const path = require('path');

function loadMocha() {
  const candidates = [process.env.LOGBOOK_MOCHA_PATH, process.env.LOGBOOK_REPO_ROOT && path.join(process.env.LOGBOOK_REPO_ROOT, 'node_modules', 'mocha')];
  for (const c of candidates.filter(Boolean)) {
    try {
      return require(c);
    } catch (e) {
      if (e.code !== 'MODULE_NOT_FOUND') throw e;
    }
  }
  throw new Error(
    `mocha not found: set LOGBOOK_MOCHA_PATH or LOGBOOK_REPO_ROOT (with node_modules/mocha) in the extension environment; tried ${candidates.filter(Boolean).join(', ') || 'nothing'}`,
  );
}

function run() {
  const Mocha = loadMocha();
  const mocha = new Mocha({ ui: 'bdd', color: false, timeout: 20000 });
  mocha.addFile(path.join(__dirname, 'smoke.e2e.js'));
  return new Promise((resolve, reject) => {
    mocha.run((failures) => (failures ? reject(new Error(`${failures} test(s) failed`)) : resolve()));
  });
}

module.exports = { run };
