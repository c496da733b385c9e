"""How to spend a budget: the priced budget table and the search for the cheapest devices and
count that meet a deadline."""
