"""Zhou & Brent's time sharing on a network of workstations: scheduling tables kept by local job managers, live."""
