# zero without its axis
mesh batch = 2
use "zero" as z (stage = 1)
schedule z
