"""How loss follows compute: the lesson's calculators, the published Chinchilla fits, the
compute-optimal split, and the fit of the user's own small runs."""
