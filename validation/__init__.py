"""Studies that measure how fast discrete ResNets approach their continuous-depth limits."""
