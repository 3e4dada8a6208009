"""The documents written moments ago, which a search cannot see until the index refreshes: this process's
memory of them and the journal through which the processes of one host share theirs."""
