"""Published scheduling studies reproduced on the simulator (one package per paper)."""
