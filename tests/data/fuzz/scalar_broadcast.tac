# w kept whole on both devices: the program is the one-device one, twice
version 1
mesh a = 2
tactic t {
  replicate param "w" on a
}
schedule t
