import { z } from 'zod'

const iso = z.string().describe('ISO 8601 time, UTC.')
const asset = z.enum(['BTC', 'USDT'])

/** `{ BTC, USDT }`: the simulated borrower's balances. */
export const balancesSchema = z.object({ BTC: z.number(), USDT: z.number() }).meta({ id: 'Balances', description: "The simulated borrower's wallet balances." })

/** A sandbox wallet object (spec 2.3). */
export const sandboxWalletSchema = z
  .object({
    asset,
    chainCode: z.literal('sandbox'),
    address: z.string().describe('Deterministic fake address; never a real chain address.'),
    requiredConfirmations: z.number().int().describe('Confirmations the confirm step must report (BTC 2, USDT 6 by default).'),
    isRealWallet: z.literal(false),
    confirmationMode: z.literal('api_action').describe('Transfers are confirmed by an API call, not a chain.'),
  })
  .meta({ id: 'SandboxWallet', description: 'A simulated wallet (spec 2.3).' })

/** Figures calculated for a new loan. */
export const loanTermsSchema = z
  .object({
    collateralValueUsd: z.number(),
    ltv: z.number().describe('Percent, 2 decimals.'),
    originationFee: z.number(),
    payoutAmount: z.number().describe('USDT the wallet receives: loan amount minus the origination fee.'),
    interestDue: z.number().describe('Interest of the first payment period.'),
    interestRatePercent: z.number(),
    interestPaymentMonths: z.number().int().optional().describe('Months per interest period (terms.interest_payment_months when quoted).'),
  })
  .meta({ id: 'LoanTerms', description: 'Loan parameters calculated at start_collateral_transfer.' })

/** A loan application: the draft of the 4-step flow. */
export const loanApplicationSchema = z
  .object({
    id: z.string().describe('`app_` + random id.'),
    status: z.enum(['awaiting_collateral', 'collateral_confirmed', 'kyt_completed', 'completed']),
    collateral_btc: z.number(),
    loan_amount: z.number(),
    loan_currency: z.string(),
    external_client_id: z.string().optional(),
    client_reference: z.string().optional(),
    wallets: z.object({ collateralDeposit: sandboxWalletSchema, loanPayout: sandboxWalletSchema, collateralReturn: sandboxWalletSchema }),
    calculation: loanTermsSchema,
    collateral_tx_hash: z.string().optional(),
    loan_id: z.string().optional().describe('Set once the payout made the application a loan.'),
    createdAt: iso,
    updatedAt: iso,
  })
  .meta({ id: 'LoanApplication', description: 'A loan application (the draft of the 4-step flow until payout).' })

/** One line of a loan's history. */
export const loanHistoryEntrySchema = z
  .object({ type: z.string(), at: iso, amount: z.number().optional(), asset: asset.optional(), operation_id: z.string().optional() })
  .meta({ id: 'LoanHistoryEntry' })

/** A loan. */
export const loanSchema = z
  .object({
    id: z.string().describe('`loan_` + random id.'),
    status: z.enum(['active', 'closed', 'liquidated']),
    currency: z.string(),
    principal: z.number(),
    debt: z.number(),
    collateral: z.number().describe('BTC.'),
    ltv: z.number().describe('debt / (collateral × btc_usd) × 100, 2 decimals.'),
    interestDue: z.number(),
    interestRatePercent: z.number(),
    interestPaymentMonths: z
      .number()
      .int()
      .optional()
      .describe('Months per interest period, fixed at issue like the rate; absent on loans stored before it was recorded (the config\'s then applies).'),
    originationFee: z.number(),
    application_id: z.string().optional(),
    external_client_id: z.string().optional(),
    client_reference: z.string().optional(),
    createdAt: iso,
    updatedAt: iso,
    closedAt: iso.optional(),
    history: z.array(loanHistoryEntrySchema),
  })
  .meta({ id: 'Loan', description: 'A loan (decisions.md "Loan state").' })

/** A repayment operation of the 5-step flow. */
export const repaymentOperationSchema = z
  .object({
    operation_id: z.string(),
    loan_id: z.string(),
    status: z.enum(['awaiting_payment', 'payment_confirmed', 'kyt_completed', 'settled', 'collateral_returned']),
    repayment_kind: z.enum(['interest', 'partial_principal', 'full_principal']),
    amount: z.number(),
    currency: z.string(),
    wallets: z.object({ repayment: sandboxWalletSchema, collateralReturn: sandboxWalletSchema.nullable() }),
    tx_hash: z.string().optional(),
    createdAt: iso,
    updatedAt: iso,
  })
  .meta({ id: 'RepaymentOperation', description: 'A repayment operation of the 5-step flow.' })

/** The loan state: GET loans, and the body of every loan POST. */
export const loanStateSchema = z
  .object({
    wallet: balancesSchema,
    activeLoans: z.array(loanSchema),
    loanHistory: z.array(loanSchema).describe('Closed and liquidated loans.'),
    draft: loanApplicationSchema.nullable().describe('The open application of the 4-step flow, if any.'),
    sandboxFlow: z.object({ loanApplications: z.array(loanApplicationSchema), repaymentOperations: z.array(repaymentOperationSchema) }),
  })
  .meta({ id: 'LoanState', description: 'The loan state of one key (decisions.md "Loan state").' })
