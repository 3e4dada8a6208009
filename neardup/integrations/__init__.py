"""What connects neardup to other systems: relational databases (``neardup import``) and Kibana."""
