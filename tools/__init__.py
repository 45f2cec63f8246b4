"""Tools around nowlab that production code never imports (testbeds/: machines to try the backends on)."""
