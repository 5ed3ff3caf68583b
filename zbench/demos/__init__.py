"""Fun GPU demos run as runner-protocol jobs, one package per demo; their table, options and views
are in the contract (``zbench.contract.demos``, ``demo_options``, ``demo_views``)."""
