package io.neardup.parity;

/** Answers every line with its own text: checks the line protocol itself. */
public final class Echo {
    private Echo() {}

    public static void main(String[] args) {
        Lines.serve(Lines::encode);
    }
}
