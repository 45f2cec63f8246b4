"""Padhye & Dowdy (1996), dynamic versus adaptive processor allocation, Figs. 3-11, live: the
figure configs (run by the experiment core, `nowlab run`), the summary page that judges the
claims between figures, and the analyses of why cells miss their predictions."""
