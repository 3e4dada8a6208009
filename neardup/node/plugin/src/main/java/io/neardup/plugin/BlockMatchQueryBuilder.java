package io.neardup.plugin;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.util.BytesRef;
import org.elasticsearch.TransportVersion;
import org.elasticsearch.TransportVersions;
import org.elasticsearch.common.ParsingException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.index.IndexSettings;
import org.elasticsearch.index.mapper.BinaryFieldMapper;
import org.elasticsearch.index.mapper.KeywordFieldMapper;
import org.elasticsearch.index.mapper.MappedFieldType;
import org.elasticsearch.index.query.AbstractQueryBuilder;
import org.elasticsearch.index.query.SearchExecutionContext;
import org.elasticsearch.xcontent.XContentBuilder;
import org.elasticsearch.xcontent.XContentParser;

import io.neardup.search.BlockMatchQuery;
import io.neardup.search.SketchCheck;

/**
 * Query {@code neardup_blocks}: the documents holding at least {@code min_shared} of the given keyword tokens, counted
 * over several fields, each scoring the number it holds ({@link BlockMatchQuery}); with {@code verify} (the
 * parameters of the {@code verify} script), only those that also pass that second check ({@link SketchCheck}).
 *
 * <pre>{"neardup_blocks": {"tokens": {"neardup.b0": ["0:1a2b", ...], "neardup.b1": [...]}, "min_shared": 1,
 *                     "verify": {"sketch_field": "neardup.minhash", "hex_field": "neardup.hex", "sketch": [...], ...}}}</pre>
 *
 * It matches and scores as a {@code bool} of one {@code constant_score} {@code term} clause per token with
 * {@code minimum_should_match} = {@code min_shared}, the ranked form of a lookup's candidate query, for less work
 * (see {@link BlockMatchQuery}); a token given twice counts twice, as its two clauses would. A field that is not
 * mapped holds nothing; a mapped field must be an indexed {@code keyword} without a normalizer, since tokens are
 * matched as they are written. At most {@code index.max_terms_count} tokens in all (65,536 by default), as a
 * {@code terms} query; a lookup sends 64. {@code verify} needs a {@code binary} sketch field and a {@code keyword}
 * hex field, both with doc values; its parameters are checked as {@link SketchCheck} says.
 */
public final class BlockMatchQueryBuilder extends AbstractQueryBuilder<BlockMatchQueryBuilder> {
    public static final String NAME = "neardup_blocks";
    static final String TOKENS = "tokens";
    static final String MIN_SHARED = "min_shared";
    static final String VERIFY = "verify";

    /** field → its tokens, in the order given */
    private final Map<String, List<String>> tokens;
    private final int minShared;
    /** the second check of {@code verify}, or null */
    private final SketchCheck check;

    public BlockMatchQueryBuilder(Map<String, List<String>> tokens, int minShared) {
        this(tokens, minShared, (SketchCheck) null);
    }

    /** @param verify the {@code verify} script's parameters of the second check, or null */
    public BlockMatchQueryBuilder(Map<String, List<String>> tokens, int minShared, Map<String, Object> verify) {
        this(tokens, minShared, verify == null ? null : checkOf(verify));
    }

    /** @param check the second check a match must also pass, or null */
    public BlockMatchQueryBuilder(Map<String, List<String>> tokens, int minShared, SketchCheck check) {
        if (tokens == null || tokens.isEmpty()) {
            throw new IllegalArgumentException("[" + NAME + "] needs [" + TOKENS + "]: an object of fields, each with its tokens");
        }
        if (minShared < 1) {
            throw new IllegalArgumentException("[" + NAME + "] [" + MIN_SHARED + "] must be at least 1, not " + minShared);
        }
        Map<String, List<String>> copy = new LinkedHashMap<>();
        tokens.forEach((field, values) -> copy.put(field, List.copyOf(values)));
        this.tokens = copy;
        this.minShared = minShared;
        this.check = check;
    }

    private static SketchCheck checkOf(Map<String, Object> verify) {
        for (String name : verify.keySet()) {
            if (SketchCheck.PARAMS.contains(name) == false) {
                throw new IllegalArgumentException("[" + NAME + "] [" + VERIFY + "] does not take [" + name + "]; it takes " + SketchCheck.PARAMS);
            }
        }
        return SketchCheck.fromParams(verify);
    }

    public BlockMatchQueryBuilder(StreamInput in) throws IOException {
        super(in);
        // in the order written, as the JSON gave it (readMap would give a HashMap's order); the Lucene query sorts
        // its fields anyway, so the same query from the wire and from JSON shares a query-cache entry
        this.tokens = in.readOrderedMap(StreamInput::readString, StreamInput::readStringCollectionAsList);
        this.minShared = in.readVInt();
        this.check = in.readBoolean() ? checkOf(in.readGenericMap()) : null;
    }

    @Override
    protected void doWriteTo(StreamOutput out) throws IOException {
        out.writeMap(tokens, StreamOutput::writeStringCollection);
        out.writeVInt(minShared);
        out.writeBoolean(check != null);
        if (check != null) {
            out.writeGenericMap(check.toParams());
        }
    }

    @Override
    protected void doXContent(XContentBuilder builder, Params params) throws IOException {
        builder.startObject(NAME);
        builder.startObject(TOKENS);
        for (Map.Entry<String, List<String>> field : tokens.entrySet()) {
            builder.stringListField(field.getKey(), field.getValue());
        }
        builder.endObject();
        builder.field(MIN_SHARED, minShared);
        if (check != null) {
            builder.field(VERIFY, check.toParams());
        }
        boostAndQueryNameToXContent(builder);
        builder.endObject();
    }

    public static BlockMatchQueryBuilder fromXContent(XContentParser parser) throws IOException {
        Map<String, List<String>> tokens = null;
        int minShared = 1;
        Map<String, Object> verify = null;
        float boost = DEFAULT_BOOST;
        String queryName = null;
        String current = null;
        XContentParser.Token token;
        while ((token = parser.nextToken()) != XContentParser.Token.END_OBJECT) {
            if (token == XContentParser.Token.FIELD_NAME) {
                current = parser.currentName();
            } else if (token == XContentParser.Token.START_OBJECT && TOKENS.equals(current)) {
                tokens = parseTokens(parser);
            } else if (token == XContentParser.Token.START_OBJECT && VERIFY.equals(current)) {
                verify = parser.map();
            } else if (token.isValue() && MIN_SHARED.equals(current)) {
                minShared = minShared(parser);
            } else if (token.isValue() && BOOST_FIELD.match(current, parser.getDeprecationHandler())) {
                boost = parser.floatValue();
            } else if (token.isValue() && NAME_FIELD.match(current, parser.getDeprecationHandler())) {
                queryName = parser.text();
            } else {
                throw new ParsingException(parser.getTokenLocation(), "[" + NAME + "] does not take [" + current + "] as " + token);
            }
        }
        try {
            return new BlockMatchQueryBuilder(tokens, minShared, verify).boost(boost).queryName(queryName);
        } catch (IllegalArgumentException e) {
            throw new ParsingException(parser.getTokenLocation(), e.getMessage(), e);
        }
    }

    /**
     * {@code min_shared}: a whole number, given as a number or a string of one, as Elasticsearch takes its numbers.
     * Not {@code parser.intValue()}, which cuts 1.7 to 1 (a query counting fewer tokens than asked, silently) and
     * answers "abc" with a bare number_format_exception.
     */
    private static int minShared(XContentParser parser) throws IOException {
        Object value;
        if (parser.currentToken() == XContentParser.Token.VALUE_NUMBER) {
            value = parser.numberValue();
        } else if (parser.currentToken() == XContentParser.Token.VALUE_STRING) {
            String text = parser.text();
            try {
                value = Long.parseLong(text.strip());
            } catch (NumberFormatException e) {
                throw new ParsingException(parser.getTokenLocation(), "[" + NAME + "] [" + MIN_SHARED + "] must be a whole "
                    + "number, not [" + text + "]");
            }
        } else {
            throw new ParsingException(parser.getTokenLocation(), "[" + NAME + "] [" + MIN_SHARED + "] must be a whole "
                + "number, not " + parser.currentToken());
        }
        long whole;
        try {
            whole = SketchCheck.wholeNumber(value, "[" + NAME + "] [" + MIN_SHARED + "]", Long.MIN_VALUE, Long.MAX_VALUE);
        } catch (IllegalArgumentException e) {
            throw new ParsingException(parser.getTokenLocation(), e.getMessage());
        }
        if (whole > Integer.MAX_VALUE) {
            throw new ParsingException(parser.getTokenLocation(), "[" + NAME + "] [" + MIN_SHARED + "] must be at most "
                + Integer.MAX_VALUE + ", not " + whole);
        }
        return (int) Math.max(whole, Integer.MIN_VALUE); // below 1: refused by the constructor, saying so
    }

    private static Map<String, List<String>> parseTokens(XContentParser parser) throws IOException {
        Map<String, List<String>> tokens = new LinkedHashMap<>();
        XContentParser.Token token;
        while ((token = parser.nextToken()) != XContentParser.Token.END_OBJECT) {
            String field = parser.currentName();
            if (parser.nextToken() != XContentParser.Token.START_ARRAY) {
                throw new ParsingException(parser.getTokenLocation(), "[" + NAME + "] tokens of [" + field + "] must be an array of strings");
            }
            List<String> values = new ArrayList<>();
            while ((token = parser.nextToken()) != XContentParser.Token.END_ARRAY) {
                if (token != XContentParser.Token.VALUE_STRING) {
                    throw new ParsingException(parser.getTokenLocation(), "[" + NAME + "] tokens of [" + field + "] must be strings, not " + token);
                }
                values.add(parser.text());
            }
            tokens.put(field, values);
        }
        return tokens;
    }

    @Override
    protected Query doToQuery(SearchExecutionContext context) {
        // the bound a terms query has, for the same reason: each token is sought in every segment and its postings
        // are gathered (BlockMatchQuery.match), so the number of tokens is the work and memory a request may ask of
        // every shard; a lookup sends 64 (16 seeds x 4 blocks). Counted as given, repeats too, as terms counts them.
        long given = tokens.values().stream().mapToLong(List::size).sum();
        int allowed = context.getIndexSettings().getMaxTermsCount();
        if (given > allowed) {
            throw new IllegalArgumentException("[" + NAME + "] was given [" + given + "] tokens, more than the [" + allowed
                + "] this index allows; the limit is the index setting [" + IndexSettings.MAX_TERMS_COUNT_SETTING.getKey()
                + "], as for a terms query");
        }
        List<String> fields = new ArrayList<>();
        List<List<BytesRef>> terms = new ArrayList<>();
        for (Map.Entry<String, List<String>> entry : tokens.entrySet()) {
            MappedFieldType type = context.getFieldType(entry.getKey());
            if (type == null) {
                continue; // not mapped: holds no token, as a terms query on it matches nothing
            }
            if (type instanceof KeywordFieldMapper.KeywordFieldType == false
                || ((KeywordFieldMapper.KeywordFieldType) type).hasNormalizer()
                || type.isIndexed() == false) {
                throw new IllegalArgumentException("[" + NAME + "] field [" + entry.getKey() + "] must be an indexed keyword field "
                    + "without a normalizer, not [" + type.typeName() + "]: an index neardup did not set up (its fields mapped "
                    + "dynamically by a first write); create it with `neardup setup INDEX` before writing through the pipeline");
            }
            List<BytesRef> values = new ArrayList<>(entry.getValue().size());
            for (String value : entry.getValue()) {
                values.add(new BytesRef(value));
            }
            fields.add(type.name());
            terms.add(values);
        }
        if (fields.isEmpty()) {
            return new MatchNoDocsQuery("[" + NAME + "] none of its fields is mapped");
        }
        if (check != null) {
            refuseUnreadable(check, context::getFieldType, "[" + NAME + "] ");
        }
        return new BlockMatchQuery(fields, terms, minShared, check);
    }

    /**
     * Refuses, naming the parameter, the field and the type it needs, a check whose fields the index cannot give it:
     * not mapped, not the type it reads (the sketch field's binary doc values, the hex field's keyword doc values),
     * or without doc values. Read as they are, such a field failed every shard holding a candidate with an
     * illegal_state_exception (a 500, or a 200 with failed shards), or matched nothing. The query and the
     * {@code verify} script both call this when they are built, so the refusal is a 400 on every shard alike.
     *
     * @param prefix what the messages start with (the query's name, or nothing for the script)
     */
    static void refuseUnreadable(SketchCheck check, Function<String, MappedFieldType> types, String prefix) {
        for (String param : List.of("sketch_field", "hex_field")) {
            boolean sketch = param.equals("sketch_field");
            String field = sketch ? check.sketchField() : check.hexField();
            MappedFieldType type = types.apply(field);
            if (type == null) {
                throw new IllegalArgumentException(prefix + "verify reads [" + field + "], which this index does not map");
            }
            boolean readable = sketch ? type instanceof BinaryFieldMapper.BinaryFieldType : type instanceof KeywordFieldMapper.KeywordFieldType;
            if (readable == false) {
                throw new IllegalArgumentException(prefix + "verify param [" + param + "] names [" + field + "], a ["
                    + type.typeName() + "] field; it must be a [" + (sketch ? "binary" : "keyword") + "] field, "
                    + (sketch ? "the sketches as neardup.minhash holds them" : "the fingerprints in hex as neardup.hex holds them"));
            }
            if (type.hasDocValues() == false) {
                // read as none, every candidate would fail the check: the lookup would find nothing, silently
                throw new IllegalArgumentException(prefix + "verify reads the doc values of [" + field
                    + "], which this index does not keep (mapped with doc_values false); search without verify");
            }
        }
    }

    @Override
    protected boolean doEquals(BlockMatchQueryBuilder other) {
        return minShared == other.minShared && tokens.equals(other.tokens) && Objects.equals(check, other.check);
    }

    @Override
    protected int doHashCode() {
        return Objects.hash(tokens, minShared, check);
    }

    @Override
    public String getWriteableName() {
        return NAME;
    }

    @Override
    public TransportVersion getMinimalSupportedVersion() {
        return TransportVersions.V_8_0_0;
    }
}
