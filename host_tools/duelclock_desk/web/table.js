// A table's page: the words in the chosen language, the phase label, the print button.
'use strict';

function drawPhase() {
  const el = document.getElementById('phase');
  const d = el.dataset;
  const v = {phase: d.phase || null, result: d.result, duel: d.duel};
  const ph = phaseInfo(v, null, false);
  el.className = 'phase ph-' + ph.cls;
  el.textContent = ph.label;
}

applyI18n();
drawPhase();
langPicker(document.getElementById('lang'), drawPhase);
document.getElementById('print').addEventListener('click', () => window.print());
