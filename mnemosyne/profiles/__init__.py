"""What a kind of document knows, as data a library chooses: profiles (catalog.py) with their synonym
sets, instruction phrases, identity readers and period rules, and the libraries' own synonym sets."""
