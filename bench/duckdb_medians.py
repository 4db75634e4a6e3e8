"""bench/duckdb_medians.py: collate's cells computed by DuckDB, the peer bench/run and
bench/collate.sh time collate against: the median per (name, label) of the samples of the
runs that finished (an ok summary), as `name,label,median` lines.

Usage: PYTHON bench/duckdb_medians.py FILE KEY[,KEY...]   (KEY: the values key of the cells;
with several, each sample's first present one, as each row's headline picks one metric)

read_json is given the columns collate needs (type, run, name, label, status and the values
keys), so that DuckDB neither infers a schema nor builds what the query drops; two threads,
as collate's parser threads on the two-CPU machine these figures come from.
"""
import sys

import duckdb


def main():
    path, keys = sys.argv[1], sys.argv[2].split(",")
    con = duckdb.connect()
    con.execute("SET threads TO 2")
    values = "STRUCT(" + ", ".join(f"{k} DOUBLE" for k in keys) + ")"
    columns = {
        "type": "VARCHAR",
        "run": "VARCHAR",
        "name": "VARCHAR",
        "label": "VARCHAR",
        "status": "VARCHAR",
        "values": values,
    }
    metric = "coalesce(" + ", ".join(f'"values".{k}' for k in keys) + ")"
    query = f"""
        WITH r AS (SELECT * FROM read_json(?, format = 'newline_delimited', columns = {columns!r})),
        ok AS (SELECT DISTINCT run FROM r WHERE type = 'summary' AND status = 'ok')
        SELECT name, label, median({metric}) FROM r SEMI JOIN ok USING (run)
        WHERE type = 'sample' GROUP BY name, label ORDER BY name, label
    """
    out = sys.stdout
    for name, label, median in con.execute(query, [path]).fetchall():
        out.write(f"{name},{label},{median!r}\n")
    out.flush()


if __name__ == "__main__":
    main()
